/*
 * stallwatch: how long this machine keeps an ordinary process off the CPU.
 *
 *   stallwatch SECONDS
 *
 * Sleeps 10 ms at a time for SECONDS (or until SIGTERM/SIGINT) and prints, on
 * exit, the longest gap between two wake-ups beyond the 10 ms asked for, and
 * how many gaps exceeded 100 ms:
 *
 *   stallwatch: max_gap_ms 1930.4 gaps_over_100ms 3 seconds 50.0
 *
 * bench/run.sh runs it beside each measured window: a client latency maximum
 * about as large as this gap is the machine's (other tenants, the hypervisor),
 * not the server's or the load tool's. It does no work of its own, so it
 * cannot be the one that is slow.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	char *end;
	double seconds = argc == 2 ? strtod(argv[1], &end) : -1;
	if (argc != 2 || *end || seconds <= 0 || seconds > 86400) {
		fprintf(stderr, "usage: stallwatch SECONDS (0 < SECONDS <= 86400)\n");
		return 2;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	const struct timespec tick = {0, 10 * 1000 * 1000};
	double start = now_ms(), last = start, max_gap = 0;
	long over = 0;
	while (!stop && last - start < seconds * 1e3) {
		nanosleep(&tick, NULL);
		double t = now_ms(), gap = t - last - 10.0;
		if (gap > max_gap)
			max_gap = gap;
		if (gap > 100.0)
			over++;
		last = t;
	}
	printf("stallwatch: max_gap_ms %.1f gaps_over_100ms %ld seconds %.1f\n",
	       max_gap < 0 ? 0 : max_gap, over, (last - start) / 1e3);
	return 0;
}
