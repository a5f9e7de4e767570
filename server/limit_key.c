/* Keys of DNs and client addresses for the abuse limits: FNV-1a under a random seed, then
 * a 64-bit finalizer (splitmix64's) so that every bit of the key depends on every input bit
 * (the tables pick a place by the low bits). */
#include "server/limit_key.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>

static uint64_t seed;
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

static void seed_init(void)
{
	/* Without randomness (no getrandom at start-up) the seed stays fixed: the keys still
	 * count, a client able to guess them could only aim at a place of the tables. */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = 0x6d696e69646972ULL;
}

static uint64_t hash(unsigned char kind, const unsigned char *p, size_t len)
{
	pthread_once(&seed_once, seed_init);
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	h = (h ^ kind) * 0x100000001b3ULL;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	/* The top bit tells an address's key from a DN's (bind_limit_counts counts them
	 * apart); a DN's is never 0, "none" to the tables (made 1 then: forcing a low bit on
	 * every DN's key would put DNs in half the table's sets, the low bits naming them). */
	if (kind != 'd')
		return h | LIMIT_KEY_ADDR;
	h &= ~LIMIT_KEY_ADDR;
	return h ? h : 1;
}

uint64_t limit_key_dn(const void *ndn, size_t len)
{
	return hash('d', ndn, len);
}

uint64_t limit_key_peer(const char *peer)
{
	char host[64];
	const char *start = peer, *end;
	if (peer[0] == '[') {
		start = peer + 1;
		end = strchr(start, ']');
	} else {
		end = strrchr(peer, ':');
	}
	if (!end || (size_t)(end - start) >= sizeof(host))
		return 0;
	memcpy(host, start, (size_t)(end - start));
	host[end - start] = '\0';
	unsigned char a[16];
	if (inet_pton(AF_INET, host, a) == 1)
		return hash('4', a, 4);
	if (inet_pton(AF_INET6, host, a) != 1)
		return 0;
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (memcmp(a, mapped, sizeof(mapped)) == 0)
		return hash('4', a + 12, 4);
	return hash('6', a, 8); /* the /64 */
}
