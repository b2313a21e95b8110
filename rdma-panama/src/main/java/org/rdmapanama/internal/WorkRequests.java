package org.rdmapanama.internal;

import org.rdmapanama.ffi.Rdma;
import org.rdmapanama.ffi.ibv_recv_wr;
import org.rdmapanama.ffi.ibv_send_wr;
import org.rdmapanama.ffi.ibv_sge;
import org.rdmapanama.ffi.ibv_wc;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;

/**
 * The layouts and field offsets of the data path's structs: {@code struct
 * ibv_send_wr}, {@code ibv_recv_wr}, {@code ibv_sge} and {@code ibv_wc}.
 * Static finals, so that a caller's own static final copy is a constant the
 * JIT folds into its plain reads and writes at an offset.
 */
public final class WorkRequests {
    private WorkRequests() {}

    public static final MemoryLayout SEND_WR = ibv_send_wr.layout();
    public static final long SEND_WR_SIZE = ibv_send_wr.sizeof();
    public static final long SEND_WR_ID = ibv_send_wr.wr_id$offset();
    public static final long SEND_NEXT = ibv_send_wr.next$offset();
    public static final long SEND_SG_LIST = ibv_send_wr.sg_list$offset();
    public static final long SEND_NUM_SGE = ibv_send_wr.num_sge$offset();
    public static final long SEND_OPCODE = ibv_send_wr.opcode$offset();
    public static final long SEND_FLAGS = ibv_send_wr.send_flags$offset();
    public static final long SEND_IMM_DATA = ibv_send_wr.imm_data$offset();
    public static final long RDMA_REMOTE_ADDR = sendOffset("wr", "rdma", "remote_addr");
    public static final long RDMA_RKEY = sendOffset("wr", "rdma", "rkey");
    public static final long ATOMIC_REMOTE_ADDR = sendOffset("wr", "atomic", "remote_addr");
    public static final long ATOMIC_COMPARE_ADD = sendOffset("wr", "atomic", "compare_add");
    public static final long ATOMIC_SWAP = sendOffset("wr", "atomic", "swap");
    public static final long ATOMIC_RKEY = sendOffset("wr", "atomic", "rkey");
    public static final long UD_AH = sendOffset("wr", "ud", "ah");
    public static final long UD_REMOTE_QPN = sendOffset("wr", "ud", "remote_qpn");
    public static final long UD_REMOTE_QKEY = sendOffset("wr", "ud", "remote_qkey");

    public static final int FLAG_FENCE = Rdma.IBV_SEND_FENCE();
    public static final int FLAG_SIGNALED = Rdma.IBV_SEND_SIGNALED();
    public static final int FLAG_SOLICITED = Rdma.IBV_SEND_SOLICITED();
    public static final int FLAG_INLINE = Rdma.IBV_SEND_INLINE();

    public static final MemoryLayout RECV_WR = ibv_recv_wr.layout();
    public static final long RECV_WR_SIZE = ibv_recv_wr.sizeof();
    public static final long RECV_WR_ID = ibv_recv_wr.wr_id$offset();
    public static final long RECV_NEXT = ibv_recv_wr.next$offset();
    public static final long RECV_SG_LIST = ibv_recv_wr.sg_list$offset();
    public static final long RECV_NUM_SGE = ibv_recv_wr.num_sge$offset();

    public static final MemoryLayout SGE = ibv_sge.layout();
    public static final long SGE_SIZE = ibv_sge.sizeof();
    public static final long SGE_ADDR = ibv_sge.addr$offset();
    public static final long SGE_LENGTH = ibv_sge.length$offset();
    public static final long SGE_LKEY = ibv_sge.lkey$offset();

    public static final MemoryLayout WC = ibv_wc.layout();
    public static final long WC_SIZE = ibv_wc.sizeof();
    public static final long WC_WR_ID = ibv_wc.wr_id$offset();
    public static final long WC_STATUS = ibv_wc.status$offset();
    public static final long WC_OPCODE = ibv_wc.opcode$offset();
    public static final long WC_VENDOR_ERR = ibv_wc.vendor_err$offset();
    public static final long WC_BYTE_LEN = ibv_wc.byte_len$offset();
    public static final long WC_IMM_DATA = ibv_wc.imm_data$offset();
    public static final long WC_QP_NUM = ibv_wc.qp_num$offset();
    public static final long WC_SRC_QP = ibv_wc.src_qp$offset();
    public static final long WC_FLAGS = ibv_wc.wc_flags$offset();

    private static long sendOffset(String... path) {
        PathElement[] elements = new PathElement[path.length];
        for (int i = 0; i < path.length; i++) {
            elements[i] = PathElement.groupElement(path[i]);
        }
        return ibv_send_wr.layout().byteOffset(elements);
    }
}
