/*
 * bench/idleconns.c: holds N idle LDAP connections on a server, each after an
 * anonymous bind, until a line arrives on standard input; bench/idle.sh measures
 * the server's memory meanwhile.
 *
 *   idleconns HOST PORT N
 *
 * Prints "held N" once every connection's bind was answered, "closed" after closing
 * them. Exits 1 with a message if a connection or bind fails.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* BindRequest, message ID 1, version 3, name "", simple "" */
static const unsigned char bind_req[] = {0x30, 0x0c, 0x02, 0x01, 0x01, 0x60, 0x07,
                                         0x02, 0x01, 0x03, 0x04, 0x00, 0x80, 0x00};

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: idleconns HOST PORT N\n");
		return 2;
	}
	int n = atoi(argv[3]);
	int *fds = calloc((size_t)n, sizeof(int));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
	inet_pton(AF_INET, argv[1], &sa.sin_addr);
	for (int i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    send(fds[i], bind_req, sizeof(bind_req), 0) != sizeof(bind_req)) {
			fprintf(stderr, "idleconns: connection %d: %s\n", i, strerror(errno));
			return 1;
		}
		/* Read each answer before the next connect: the server's backlog stays small. */
		unsigned char buf[256];
		struct timeval tv = {.tv_sec = 10};
		setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (recv(fds[i], buf, sizeof(buf), 0) <= 0 || buf[0] != 0x30) {
			fprintf(stderr, "idleconns: bind %d not answered\n", i);
			return 1;
		}
	}
	printf("held %d\n", n);
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	for (int i = 0; i < n; i++)
		close(fds[i]);
	printf("closed\n");
	free(fds);
	return 0;
}
