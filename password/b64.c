/* base64 of password values: see b64.h. */
#include "password/b64.h"

#include <openssl/evp.h>

/* The longest text decoded: more than any value a scheme here stores (389-ds's
 * {PBKDF2_SHA256}: 432 characters). */
#define B64_TEXT_MAX 1100

int b64_decode(const char *in, size_t len, unsigned char *out, size_t cap, bool adapted)
{
	char text[B64_TEXT_MAX + 4];
	if (len == 0 || len > B64_TEXT_MAX || (!adapted && len % 4) || (len + 3) / 4 * 3 > cap)
		return -1;
	for (size_t i = 0; i < len; i++)
		text[i] = adapted && in[i] == '.' ? '+' : in[i];
	while (len % 4)
		text[len++] = '=';
	int n = EVP_DecodeBlock(out, (const unsigned char *)text, (int)len);
	if (n < 0)
		return -1;
	return n - (text[len - 1] == '=') - (text[len - 2] == '='); /* DecodeBlock counts padding */
}

size_t b64_encode(const unsigned char *raw, size_t n, char *out, bool adapted)
{
	size_t len =
	    (size_t)EVP_EncodeBlock((unsigned char *)out, raw, (int)n); /* NUL-terminates */
	if (!adapted)
		return len;
	while (len && out[len - 1] == '=')
		out[--len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (out[i] == '+')
			out[i] = '.';
	return len;
}
