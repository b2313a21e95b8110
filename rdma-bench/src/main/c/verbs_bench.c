/*
 * The C side of VerbsBenchmark: the same three operations on the same device,
 * and a bare indirect call, timed with CLOCK_MONOTONIC, so that Java/C ratios
 * come from one boot.
 *
 *   verbs_bench DEVICE ROUNDS
 *
 * prints, per round, one line per operation: "<name> <ns/op>".
 * Built at run time by scripts/jmh-vs-c: gcc -O2 verbs_bench.c -libverbs
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RECV_BATCH 256

static void die(const char *what)
{
	fprintf(stderr, "verbs_bench: %s failed\n", what);
	exit(1);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The RoCEv2 IPv4 GID, by type, as the Java side picks it. */
static int roce_v2_ipv4_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	struct ibv_gid_entry entries[256];
	ssize_t n = ibv_query_gid_table(ctx, entries, 256, 0);

	for (ssize_t i = 0; i < n; i++) {
		const uint8_t *raw = entries[i].gid.raw;
		int v4 = raw[10] == 0xff && raw[11] == 0xff;

		for (int j = 0; j < 10; j++)
			v4 &= raw[j] == 0;
		if (entries[i].gid_type == IBV_GID_TYPE_ROCE_V2 && v4) {
			*gid = entries[i].gid;
			return entries[i].gid_index;
		}
	}
	die("finding a RoCEv2 IPv4 GID");
	return -1;
}

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq, int recv_wr)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 128, .max_recv_wr = recv_wr, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

static void to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
}

static void connect_qp(struct ibv_qp *qp, uint32_t dest, union ibv_gid *gid, int gid_index)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dest,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = gid_index, .hop_limit = 1 } },
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

static void reset_to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("modify to RESET");
	to_init(qp);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: verbs_bench DEVICE ROUNDS\n");
		return 2;
	}
	int rounds = atoi(argv[2]);
	int num;
	struct ibv_device **list = ibv_get_device_list(&num);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && i < num; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("opening the device");

	union ibv_gid gid;
	int gid_index = roce_v2_ipv4_gid(ctx, &gid);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *empty = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, RECV_BATCH + 1, NULL, NULL, 0);
	static char src[4096], dst[4096], rbuf[4096];
	struct ibv_mr *src_mr = ibv_reg_mr(pd, src, sizeof src, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *dst_mr = ibv_reg_mr(pd, dst, sizeof dst, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_mr *r_mr = ibv_reg_mr(pd, rbuf, sizeof rbuf, IBV_ACCESS_LOCAL_WRITE);

	if (!pd || !empty || !cq || !rcq || !src_mr || !dst_mr || !r_mr)
		die("creating resources");
	struct ibv_qp *a = rc_qp(pd, cq, 1), *b = rc_qp(pd, cq, 1), *r = rc_qp(pd, rcq, RECV_BATCH);

	to_init(a);
	to_init(b);
	to_init(r);
	connect_qp(a, b->qp_num, &gid, gid_index);
	connect_qp(b, a->qp_num, &gid, gid_index);

	struct ibv_wc wc;
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = 64, .lkey = src_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = (uintptr_t)dst, .rkey = dst_mr->rkey } }, *bad;
	struct ibv_sge rsge = { .addr = (uintptr_t)rbuf, .length = 64, .lkey = r_mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rsge, .num_sge = 1 }, *rbad;

	/* VerbsBenchmark.nativeCall's twin: an indirect call that returns at once, as ibv_poll_cq's is. */
	void *(*volatile call)(const void *, int, size_t) = memchr;

	for (int round = 0; round < rounds; round++) {
		/* Enough calls that each measurement lasts about a second under TCG. */
		long n = 2000000;
		double t0 = now_ns();

		for (long i = 0; i < n; i++)
			if (call(src, 0, 0))
				die("memchr");
		printf("nativeCall %.1f\n", (now_ns() - t0) / n);

		t0 = now_ns();

		for (long i = 0; i < n; i++)
			if (ibv_poll_cq(empty, 1, &wc) != 0)
				die("empty poll");
		printf("pollEmptyCq %.1f\n", (now_ns() - t0) / n);

		n = 20000;
		t0 = now_ns();
		for (long i = 0; i < n; i++) {
			if (ibv_post_send(a, &wr, &bad))
				die("ibv_post_send");
			while (ibv_poll_cq(cq, 1, &wc) == 0)
				;
			if (wc.status != IBV_WC_SUCCESS)
				die("write completion");
		}
		printf("postSendPoll %.1f\n", (now_ns() - t0) / n);

		double posting = 0;
		long posted = 0;
		for (int batch = 0; batch < 400; batch++) {
			reset_to_init(r); /* outside the timing, as in JMH's Level.Invocation */
			t0 = now_ns();
			for (int i = 0; i < RECV_BATCH; i++)
				if (ibv_post_recv(r, &rwr, &rbad))
					die("ibv_post_recv");
			posting += now_ns() - t0;
			posted += RECV_BATCH;
		}
		printf("postRecv %.1f\n", posting / posted);
		fflush(stdout);
	}
	return 0;
}
