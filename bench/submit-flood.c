/* SPDX-License-Identifier: MIT */
/*
 * submit-flood SOCKET REQUEST CLIENTS: CLIENTS connections to an alloclabd control socket send
 * the message in the file REQUEST (without its terminating NUL) at once, and each times its
 * first byte sent to its reply. The first "@N@" in REQUEST becomes the client's number, padded
 * to the same width, so that no two requests are alike. Meanwhile one more connection sends io.alloclab.Ping
 * every 10 ms. Prints percentiles of both, in milliseconds. One thread and epoll, so that the client costs
 * far less than the daemon it measures (bench/submit-latency.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

typedef struct {
        int fd;
        char *message; /* the request, with this client's number in it */
        size_t size;
        size_t sent;
        double started;
        char reply[4096]; /* the beginning of the reply: enough to tell an error */
        size_t received;
} Client;

static double now(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static double quantile(const double *sorted, size_t n, double f) {
        size_t i = (size_t) (f * (double) n);
        return sorted[i < n ? i : n - 1] * 1000;
}

static int connect_to(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa.sun_path))
                return -1;
        strcpy(sa.sun_path, path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
                perror("connect");
                exit(1);
        }
        return fd;
}

/* Sends what remains of message; returns 1 once all of it (and its NUL) is sent. */
static int send_rest(Client *c) {
        ssize_t n = send(c->fd, c->message + c->sent, c->size + 1 - c->sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN) {
                perror("send");
                exit(1);
        }
        if (n > 0)
                c->sent += (size_t) n;
        return c->sent == c->size + 1;
}

/* Reads what the daemon sent; returns 1 once the reply is complete (its NUL read). */
static int receive(Client *c) {
        char buf[65536];
        for (;;) {
                ssize_t n = read(c->fd, buf, sizeof(buf));
                if (n == 0) {
                        fprintf(stderr, "the daemon closed a connection without a reply\n");
                        exit(1);
                }
                if (n < 0)
                        return errno == EAGAIN ? 0 : (perror("read"), exit(1), 0);
                size_t keep = sizeof(c->reply) - 1 - c->received;
                memcpy(c->reply + c->received, buf, (size_t) n < keep ? (size_t) n : keep);
                c->received += (size_t) n < keep ? (size_t) n : keep;
                if (memchr(buf, 0, (size_t) n))
                        return 1;
        }
}

int main(int argc, char **argv) {
        if (argc != 4) {
                fprintf(stderr, "usage: submit-flood SOCKET REQUEST CLIENTS\n");
                return 2;
        }
        size_t n_clients = (size_t) atol(argv[3]);
        FILE *f = fopen(argv[2], "re");
        static char request[1 << 20];
        size_t request_size = f ? fread(request, 1, sizeof(request) - 1, f) : 0;
        if (!f || request_size == 0 || n_clients == 0)
                return 2;
        fclose(f);
        static char ping[] = "{\"method\": \"io.alloclab.Ping\"}";
        char *number = strstr(request, "@N@");

        struct rlimit nofile = { n_clients + 64, n_clients + 64 };
        (void) setrlimit(RLIMIT_NOFILE, &nofile);
        Client *clients = calloc(n_clients + 1, sizeof(Client));
        double *acks = calloc(n_clients, sizeof(double)), *pings = calloc(100000, sizeof(double));
        int ep = epoll_create1(EPOLL_CLOEXEC);
        if (!clients || !acks || !pings || ep < 0)
                return 1;
        /* Everyone connects first (the daemon accepts at its own pace; the kernel queues the
         * rest), then everyone sends: the burst of 1000 submitters arriving together. */
        Client *pinger = &clients[n_clients];
        pinger->fd = connect_to(argv[1]); /* first: the daemon's loop, not its backlog, is timed */
        for (size_t i = 0; i < n_clients; i++)
                clients[i].fd = connect_to(argv[1]);
        *pinger = (Client){ .fd = pinger->fd, .message = ping, .size = sizeof(ping) - 1 };
        for (size_t i = 0; i < n_clients; i++) {
                Client *c = &clients[i];
                c->size = request_size;
                if (!(c->message = malloc(request_size + 1)))
                        return 1;
                memcpy(c->message, request, request_size + 1);
                if (number) {
                        char digits[4];
                        snprintf(digits, sizeof(digits), "%03zu", i % 1000);
                        memcpy(c->message + (number - request), digits, 3);
                }
        }
        for (size_t i = 0; i <= n_clients; i++) {
                Client *c = &clients[i];
                c->started = now();
                int done = send_rest(c);
                struct epoll_event ev = { .events = done ? EPOLLIN : EPOLLIN | EPOLLOUT, .data.ptr = c };
                if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
                        return 1;
        }

        size_t answered = 0, n_pings = 0, failed = 0;
        double next_ping = 0;
        while (answered < n_clients) {
                struct epoll_event events[256];
                int timeout = -1;
                if (next_ping > 0) {
                        double ms = (next_ping - now()) * 1000;
                        timeout = ms < 0 ? 0 : (int) ms + 1;
                }
                int n = epoll_wait(ep, events, 256, timeout);
                if (next_ping > 0 && now() >= next_ping) {
                        next_ping = 0;
                        *pinger = (Client){
                                .fd = pinger->fd, .message = ping, .size = sizeof(ping) - 1, .started = now()
                        };
                        (void) send_rest(pinger);
                }
                for (int k = 0; k < n; k++) {
                        Client *c = events[k].data.ptr;
                        if ((events[k].events & EPOLLOUT) && send_rest(c)) {
                                struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
                                (void) epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
                        }
                        if (!(events[k].events & EPOLLIN) || !receive(c))
                                continue;
                        double elapsed = now() - c->started;
                        if (c == pinger) {
                                if (n_pings < 100000)
                                        pings[n_pings++] = elapsed;
                                next_ping = now() + 0.010;
                                continue;
                        }
                        acks[answered++] = elapsed;
                        if (strstr(c->reply, "\"error\"") && failed++ == 0)
                                fprintf(stderr, "a submission failed: %s\n", c->reply);
                        (void) epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                        close(c->fd);
                }
        }
        if (failed) {
                fprintf(stderr, "%zu of %zu submissions failed\n", failed, n_clients);
                return 1;
        }
        qsort(acks, n_clients, sizeof(double), compare);
        printf("%zu concurrent submissions: ack p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms\n",
               n_clients, quantile(acks, n_clients, .5), quantile(acks, n_clients, .9),
               quantile(acks, n_clients, .99), acks[n_clients - 1] * 1000);
        struct rusage self;
        if (getrusage(RUSAGE_SELF, &self) == 0)
                printf("CPU of the clients: %.0f ms\n",
                       (double) (self.ru_utime.tv_sec + self.ru_stime.tv_sec) * 1e3 +
                               (double) (self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e3);
        if (n_pings > 0) {
                qsort(pings, n_pings, sizeof(double), compare);
                printf("Ping meanwhile (%zu): p50 %.1f ms, max %.1f ms\n", n_pings,
                       quantile(pings, n_pings, .5), pings[n_pings - 1] * 1000);
        }
        return 0;
}
