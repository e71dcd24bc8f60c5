/*
 * A plain rdma_cm client that connects and then does nothing (scripts/lib/two-host/driver.sh, idle-host-death):
 * no private data, so the server treats it as a plain peer; a few receives posted so that a server's message
 * finds one; then it sleeps until its host dies. It never posts a send: only the server's idle probe can find
 * out that it is gone.  Build: gcc -O2 -o idle-client idle-client.c -lrdmacm -libverbs
 * Usage: idle-client SERVER_ADDRESS PORT
 */
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    struct rdma_addrinfo hints, *res;
    struct ibv_qp_init_attr attr;
    struct rdma_cm_id *id;
    static char buf[4][4096];
    struct ibv_mr *mr;
    int i;

    if (argc != 3) {
        fprintf(stderr, "usage: %s SERVER_ADDRESS PORT\n", argv[0]);
        return 2;
    }
    memset(&hints, 0, sizeof hints);
    hints.ai_port_space = RDMA_PS_TCP;
    if (rdma_getaddrinfo(argv[1], argv[2], &hints, &res)) {
        perror("rdma_getaddrinfo");
        return 1;
    }
    memset(&attr, 0, sizeof attr);
    attr.cap.max_send_wr = attr.cap.max_recv_wr = 4;
    attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
    attr.sq_sig_all = 1;
    if (rdma_create_ep(&id, res, NULL, &attr)) {
        perror("rdma_create_ep");
        return 1;
    }
    mr = rdma_reg_msgs(id, buf, sizeof buf);
    if (!mr) {
        perror("rdma_reg_msgs");
        return 1;
    }
    for (i = 0; i < 4; i++) {
        if (rdma_post_recv(id, NULL, buf[i], sizeof buf[i], mr)) {
            perror("rdma_post_recv");
            return 1;
        }
    }
    if (rdma_connect(id, NULL)) {
        perror("rdma_connect");
        return 1;
    }
    printf("idle-client: connected to %s:%s, now idle\n", argv[1], argv[2]);
    fflush(stdout);
    for (;;) {
        pause();
    }
}
