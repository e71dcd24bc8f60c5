/*
 * A plain rdma_cm client written the way rdma-core's examples are (librdmacm/examples/rdma_client.c): no
 * private data (the server treats it as a plain peer, without credits), rdma_create_ep with a QP of its own,
 * a receive posted before rdma_connect, then per request: post the receive for the reply, post the request,
 * wait for the send's completion and for the reply. It never touches its QP's attributes (min_rnr_timer stays
 * at rdma_cm's 0 = 655 ms, rnr_retry as the server's accept sets it). Used by scripts/plain-peer-bench to
 * measure, on rxe, whether a plain peer's requests wait an RNR NAK (issue 23).
 *
 *   echo: N messages of SIZE bytes to the echo sample server; each reply is checked byte for byte.
 *   late: (optional 6th argument) post each reply's receive only after the request's send completed, as a
 *         naive client might: a reply that arrives first meets this client's receiver-not-ready, and its
 *         QP's min_rnr_timer (rdma_cm leaves 0 = 655 ms) decides the wait; the server cannot help it.
 *   busy: (optional) busy-poll the completion queues (ibv_poll_cq) instead of waiting for completion events
 *         (rdma_get_send_comp/rdma_get_recv_comp): the next request leaves microseconds after the reply.
 *   burst: (optional, kv only) all N receives posted, then all N PUTs sent back to back without waiting for a
 *         reply, then the N replies collected; the time per request is that of its send's completion, which
 *         includes any RNR NAK the server answered it with.
 *   kv:   first the server's layout handshake, then N PUT_INLINE requests (key "plain-<i>", SIZE value
 *         bytes) to the key-value sample server (samples/.../kv/KvProtocol, big-endian); each response must be
 *         OK and carry the request's id.
 * Prints every request's time from ibv_post_send to the reply's completion (the first separately), then
 * median, max and how many took over 100 ms. Exit status 0 when every reply was right, 1 otherwise.
 * Build: gcc -O2 -o plain-client plain-client.c -lrdmacm -libverbs
 * Usage: plain-client echo|kv SERVER_ADDRESS PORT N SIZE [late] [busy] [burst]
 */
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF 4096

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void put32(uint8_t *p, uint32_t v) {
    p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

static uint32_t get32(const uint8_t *p) {
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static int busy;

/* One completion of CQ: busy-polled, or as rdma_get_send_comp/rdma_get_recv_comp wait for it (an event). */
static int comp(struct rdma_cm_id *id, struct ibv_cq *cq, struct ibv_wc *wc) {
    int r;
    if (!busy) {
        return cq == id->recv_cq ? rdma_get_recv_comp(id, wc) : rdma_get_send_comp(id, wc);
    }
    while ((r = ibv_poll_cq(cq, 1, wc)) == 0) {
    }
    return r;
}

/* Waits for the receive's completion; returns its byte count, or -1 (message printed). */
static int recv_comp(struct rdma_cm_id *id, const char *what) {
    struct ibv_wc wc;
    if (comp(id, id->recv_cq, &wc) <= 0) {
        perror("rdma_get_recv_comp");
        return -1;
    }
    if (wc.status != IBV_WC_SUCCESS) {
        fprintf(stderr, "plain-client: %s: receive completed with %s\n", what, ibv_wc_status_str(wc.status));
        return -1;
    }
    return (int) wc.byte_len;
}

int main(int argc, char **argv) {
    struct rdma_addrinfo hints, *res;
    struct ibv_qp_init_attr attr;
    struct rdma_cm_id *id;
    struct ibv_mr *mr;
    struct ibv_wc wc;
    static uint8_t rbuf[BUF], sbuf[BUF], *rbufs, *sbufs;
    double *t, t0, total0;
    int kv, late, burst, n, size, i, len, slow = 0;

    late = burst = 0;
    for (i = 6; i < argc; i++) {
        late |= !strcmp(argv[i], "late");
        busy |= !strcmp(argv[i], "busy");
        burst |= !strcmp(argv[i], "burst");
    }
    if (argc < 6 || argc > 6 + late + busy + burst || (strcmp(argv[1], "echo") && strcmp(argv[1], "kv"))
        || (burst && (late || strcmp(argv[1], "kv")))) {
        fprintf(stderr, "usage: %s echo|kv SERVER_ADDRESS PORT N SIZE [late] [busy] [burst]\n", argv[0]);
        return 2;
    }
    kv = !strcmp(argv[1], "kv");
    n = atoi(argv[4]);
    size = atoi(argv[5]);
    if (n < 1 || size < 1 || size > BUF - 64) {
        fprintf(stderr, "plain-client: N must be >= 1 and SIZE 1..%d\n", BUF - 64);
        return 2;
    }
    t = calloc(n, sizeof *t);
    memset(&hints, 0, sizeof hints);
    hints.ai_port_space = RDMA_PS_TCP;
    if (rdma_getaddrinfo(argv[2], argv[3], &hints, &res)) {
        perror("rdma_getaddrinfo");
        return 1;
    }
    memset(&attr, 0, sizeof attr);
    attr.cap.max_send_wr = attr.cap.max_recv_wr = burst ? n + 1 : 1;
    attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
    attr.sq_sig_all = 1;
    if (rdma_create_ep(&id, res, NULL, &attr)) {
        perror("rdma_create_ep");
        return 1;
    }
    mr = rdma_reg_msgs(id, rbuf, sizeof rbuf);
    struct ibv_mr *smr = rdma_reg_msgs(id, sbuf, sizeof sbuf);
    if (!mr || !smr) {
        perror("rdma_reg_msgs");
        return 1;
    }
    /* As rdma_client.c: the first receive is posted before rdma_connect (echo: the first reply; kv: the
     * server's handshake, which it sends as soon as the connection is up). */
    if (rdma_post_recv(id, NULL, rbuf, sizeof rbuf, mr)) {
        perror("rdma_post_recv");
        return 1;
    }
    total0 = now_ms();
    if (rdma_connect(id, NULL)) {
        perror("rdma_connect");
        return 1;
    }
    printf("plain-client: %s: connected to %s:%s in %.1f ms\n", argv[1], argv[2], argv[3], now_ms() - total0);
    if (kv) {
        len = recv_comp(id, "handshake");
        if (len < 0) {
            return 1;
        }
        if (!late && rdma_post_recv(id, NULL, rbuf, sizeof rbuf, mr)) {
            perror("rdma_post_recv");
            return 1;
        }
    }
    total0 = now_ms();
    if (burst) {
        struct ibv_mr *rmr, *bsmr;
        rbufs = calloc(n, BUF);
        sbufs = calloc(n, BUF);
        rmr = rdma_reg_msgs(id, rbufs, (size_t) n * BUF);
        bsmr = rdma_reg_msgs(id, sbufs, (size_t) n * BUF);
        if (!rmr || !bsmr) {
            perror("rdma_reg_msgs");
            return 1;
        }
        for (i = 0; i < n; i++) {
            if (rdma_post_recv(id, NULL, rbufs + (size_t) i * BUF, BUF, rmr)) {
                perror("rdma_post_recv");
                return 1;
            }
        }
        total0 = now_ms();
        for (i = 0; i < n; i++) {
            uint8_t *b = sbufs + (size_t) i * BUF;
            char key[32];
            int k = snprintf(key, sizeof key, "plain-%d", i);
            b[0] = 1;
            b[1] = 0;
            b[2] = k >> 8;
            b[3] = k;
            put32(b + 4, (uint32_t) i + 1);
            put32(b + 8, (uint32_t) size);
            memcpy(b + 12, key, k);
            memset(b + 12 + k, 'a' + i % 26, size);
            if (rdma_post_send(id, NULL, b, 12 + k + size, bsmr, 0)) {
                perror("rdma_post_send");
                return 1;
            }
        }
        for (i = 0; i < n; i++) {
            if (comp(id, id->send_cq, &wc) <= 0 || wc.status != IBV_WC_SUCCESS) {
                fprintf(stderr, "plain-client: burst send %d: %s\n", i, ibv_wc_status_str(wc.status));
                return 1;
            }
            t[i] = now_ms() - total0;
        }
        for (i = 0; i < n; i++) {
            if (recv_comp(id, "burst reply") < 0) {
                return 1;
            }
        }
        double all = now_ms() - total0;
        printf("plain-client: kv (burst): %d PUTs of %d bytes sent back to back, all replies in %.1f ms; send"
               " completions at ms:", n, size, all);
        for (i = 0; i < n; i++) {
            printf(" %.1f", t[i]);
        }
        printf("\n");
        return 0;
    }
    for (i = 0; i < n; i++) {
        if (!late && i > 0 && rdma_post_recv(id, NULL, rbuf, sizeof rbuf, mr)) {
            perror("rdma_post_recv");
            return 1;
        }
        if (kv) {
            char key[32];
            int k = snprintf(key, sizeof key, "plain-%d", i);
            len = 12 + k + size;
            sbuf[0] = 1; /* PUT_INLINE */
            sbuf[1] = 0;
            sbuf[2] = k >> 8;
            sbuf[3] = k;
            put32(sbuf + 4, (uint32_t) i + 1);
            put32(sbuf + 8, (uint32_t) size);
            memcpy(sbuf + 12, key, k);
            memset(sbuf + 12 + k, 'a' + i % 26, size);
        } else {
            len = size;
            memset(sbuf, 'a' + i % 26, size);
        }
        t0 = now_ms();
        if (rdma_post_send(id, NULL, sbuf, len, smr, 0)) {
            perror("rdma_post_send");
            return 1;
        }
        if (comp(id, id->send_cq, &wc) <= 0) {
            perror("rdma_get_send_comp");
            return 1;
        }
        if (wc.status != IBV_WC_SUCCESS) {
            fprintf(stderr, "plain-client: request %d: send completed with %s\n", i, ibv_wc_status_str(wc.status));
            return 1;
        }
        if (late && (kv || i > 0) && rdma_post_recv(id, NULL, rbuf, sizeof rbuf, mr)) {
            perror("rdma_post_recv");
            return 1;
        }
        int got = recv_comp(id, "reply");
        if (got < 0) {
            return 1;
        }
        t[i] = now_ms() - t0;
        if (kv ? got < 18 || rbuf[0] != 0x80 || rbuf[1] != 0 || get32(rbuf + 4) != (uint32_t) i + 1
               : got != size || memcmp(rbuf, sbuf, size)) {
            fprintf(stderr, "plain-client: request %d: wrong reply (%d bytes, first byte 0x%02x status %d)\n",
                    i, got, rbuf[0], got > 1 ? rbuf[1] : -1);
            return 1;
        }
        if (t[i] > 100) {
            slow++;
        }
    }
    double all = now_ms() - total0;
    printf("plain-client: %s: request times ms:", argv[1]);
    for (i = 0; i < n; i++) {
        printf(" %.2f", t[i]);
    }
    printf("\n");
    double first = t[0];
    qsort(t, n, sizeof *t, cmp);
    printf("plain-client: %s%s: %d requests of %d bytes in %.1f ms: first %.2f ms, median %.2f ms, max %.2f ms,"
           " over 100 ms: %d\n", argv[1], late ? (busy ? " (receive posted late, busy-polled)" : " (receive posted late)") : busy ? " (busy-polled)" : "", n, size, all, first, t[n / 2], t[n - 1], slow);
    rdma_disconnect(id);
    rdma_dereg_mr(smr);
    rdma_dereg_mr(mr);
    rdma_destroy_ep(id);
    rdma_freeaddrinfo(res);
    free(t);
    return 0;
}
