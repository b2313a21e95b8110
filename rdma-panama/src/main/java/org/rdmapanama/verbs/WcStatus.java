package org.rdmapanama.verbs;

import org.rdmapanama.internal.Verbs;

/**
 * {@code enum ibv_wc_status}, in C order (ordinal = C value). The text is
 * libibverbs' own {@code ibv_wc_status_str}.
 */
public enum WcStatus {
    SUCCESS, LOC_LEN_ERR, LOC_QP_OP_ERR, LOC_EEC_OP_ERR, LOC_PROT_ERR, WR_FLUSH_ERR, MW_BIND_ERR,
    BAD_RESP_ERR, LOC_ACCESS_ERR, REM_INV_REQ_ERR, REM_ACCESS_ERR, REM_OP_ERR, RETRY_EXC_ERR,
    RNR_RETRY_EXC_ERR, LOC_RDD_VIOL_ERR, REM_INV_RD_REQ_ERR, REM_ABORT_ERR, INV_EECN_ERR,
    INV_EEC_STATE_ERR, FATAL_ERR, RESP_TIMEOUT_ERR, GENERAL_ERR, TM_ERR, TM_RNDV_INCOMPLETE,
    /** A value this version does not know. */
    UNKNOWN;

    private static final WcStatus[] BY_CODE = values();

    /** Maps the C value without allocating (it is read on the data path). */
    public static WcStatus of(int code) {
        return code >= 0 && code < UNKNOWN.ordinal() ? BY_CODE[code] : UNKNOWN;
    }

    /** {@code ibv_wc_status_str}, e.g. "remote access error". */
    public String text() {
        return this == UNKNOWN ? "unknown completion status" : Verbs.wcStatusText(ordinal());
    }

    /** For example {@code "IBV_WC_REM_ACCESS_ERR (remote access error)"}. */
    public String describe() {
        return "IBV_WC_" + name() + " (" + text() + ")";
    }
}
