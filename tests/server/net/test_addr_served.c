/* server/addr_served.c: a listening, a held (bound, not listening) and a gone address,
 * TCP on 127.0.0.1 and ::1 and a Unix socket, against real sockets of this process. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/net/addr_served.h"
#include "tests/check_run.h"

/* A socket bound to family's loopback on a free port, as a worker binds its listener
 * (SO_REUSEADDR, SO_REUSEPORT): its address in ss. */
static int bound_socket(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = socket(family, SOCK_STREAM, 0), one = 1;
	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*a);
	}
	ck_assert_int_eq(bind(fd, (struct sockaddr *)ss, *len), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)ss, len), 0);
	return fd;
}

static void held_listening_gone(int family)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = bound_socket(family, &ss, &len);
	ck_assert_msg(addr_tcp_served((struct sockaddr *)&ss, len), "held: not seen");
	ck_assert_int_eq(listen(fd, 8), 0);
	ck_assert_msg(addr_tcp_served((struct sockaddr *)&ss, len), "listening: not seen");
	close(fd);
	ck_assert_msg(!addr_tcp_served((struct sockaddr *)&ss, len), "closed: still served");
}

START_TEST(tcp4_held_listening_gone)
{
	held_listening_gone(AF_INET);
}
END_TEST

START_TEST(tcp6_held_listening_gone)
{
	held_listening_gone(AF_INET6);
}
END_TEST

/* A server stopped after a connection it closed first leaves TIME_WAIT on its port: a
 * restart there is no second server. */
START_TEST(time_wait_is_not_served)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lfd = bound_socket(AF_INET, &ss, &len);
	ck_assert_int_eq(listen(lfd, 8), 0);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(c, (struct sockaddr *)&ss, len), 0);
	int a = accept(lfd, NULL, NULL);
	ck_assert_int_ge(a, 0);
	close(a); /* the server's side closes first: its end goes to TIME_WAIT */
	char byte;
	ck_assert_int_eq(recv(c, &byte, 1, 0), 0);
	close(c);
	close(lfd);
	ck_assert_msg(!addr_tcp_served((struct sockaddr *)&ss, len),
	              "TIME_WAIT taken for a server");
}
END_TEST

START_TEST(unix_held_listening_gone)
{
	char dir[] = "/tmp/test_addr_served.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ldapi", dir);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_msg(addr_unix_served(sa.sun_path), "held: not seen");
	ck_assert_int_eq(listen(fd, 8), 0);
	ck_assert_msg(addr_unix_served(sa.sun_path), "listening: not seen");
	close(fd); /* the file stays, as after a kill -9 */
	ck_assert_msg(!addr_unix_served(sa.sun_path), "a file left behind taken for a server");
	unlink(sa.sun_path);
	rmdir(dir);
}
END_TEST

/* A server killed outright whose io_uring ring the kernel is still tearing down: its
 * listening socket outlives the process for a while and accepts connections (CI saw a
 * restart refused so). Here a child listens, hands the socket to this process and exits:
 * the socket accepts, and the process that listened is gone. */
START_TEST(unix_listener_gone_is_not_served)
{
	char dir[] = "/tmp/test_addr_served.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ldapi", dir);
	int pair[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 8) < 0)
			_exit(1);
		char cbuf[CMSG_SPACE(sizeof(int))] = {0};
		char byte = 0;
		struct iovec iov = {.iov_base = &byte, .iov_len = 1};
		struct msghdr msg = {.msg_iov = &iov,
		                     .msg_iovlen = 1,
		                     .msg_control = cbuf,
		                     .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
		_exit(sendmsg(pair[1], &msg, 0) == 1 ? 0 : 1);
	}
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr msg = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	ck_assert_int_eq(recvmsg(pair[0], &msg, 0), 1);
	int held;
	memcpy(&held, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof(int));
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_int_eq(status, 0);
	int probe = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(probe, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(probe);
	ck_assert_msg(!addr_unix_served(sa.sun_path),
	              "a socket whose listening process is gone taken for a server");
	close(held);
	close(pair[0]);
	close(pair[1]);
	unlink(sa.sun_path);
	rmdir(dir);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("addr_served");
	TCase *tc = tcase_create("addr_served");
	tcase_add_test(tc, tcp4_held_listening_gone);
	tcase_add_test(tc, tcp6_held_listening_gone);
	tcase_add_test(tc, time_wait_is_not_served);
	tcase_add_test(tc, unix_held_listening_gone);
	tcase_add_test(tc, unix_listener_gone_is_not_served);
	suite_add_tcase(su, tc);
	return check_run(su);
}
