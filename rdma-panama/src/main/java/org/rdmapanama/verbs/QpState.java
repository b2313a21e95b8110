package org.rdmapanama.verbs;

/** {@code enum ibv_qp_state}, in C order. RESET → INIT → RTR → RTS carries traffic; ERR flushes. */
public enum QpState {
    RESET, INIT, RTR, RTS, SQD, SQE, ERR, UNKNOWN;

    public static QpState of(int code) {
        return code >= 0 && code < UNKNOWN.ordinal() ? values()[code] : UNKNOWN;
    }
}
