/**
 * {@code rdma-bench rc_pingpong}, and the TCP exchange of QP addresses in
 * libibverbs' pingpong wire format that it alone uses: here rather than in the
 * runtime, whose connections go through rdma_cm.
 */
package org.rdmapanama.bench.rcpingpong;
