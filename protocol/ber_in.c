/* Client BER, element by element; see ber_in.h for the rules (the short forms are inline). */
#include "protocol/ber_in.h"

#include "protocol/tlv.h"

int ber_in_take_long(struct ber_in *in, unsigned char tag, struct ber_in *content)
{
	const unsigned char *p = in->p, *v;
	unsigned char t;
	size_t len;
	if (p >= in->end || *p != tag || !tlv_read(&p, in->end, &t, &v, &len))
		return -1;
	in->p = p;
	content->p = v;
	content->end = v + len;
	return 0;
}
