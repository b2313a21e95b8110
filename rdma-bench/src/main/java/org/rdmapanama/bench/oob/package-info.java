/**
 * The TCP exchange of QP addresses in libibverbs' pingpong wire format, for
 * {@code rc_pingpong}: its only user, so it lives here rather than in the
 * runtime, whose connections go through rdma_cm.
 */
package org.rdmapanama.bench.oob;
