package org.rdmapanama.error;


/**
 * The provider reported {@code IBV_EVENT_CQ_ERR}: a completion arrived when
 * the CQ was full and was dropped. The CQ cannot be trusted any more (which
 * work requests finished is unknown); close it and its queue pairs.
 */
public final class CompletionQueueOverrunException extends RdmaException {
    public CompletionQueueOverrunException(String message) {
        super("ibv_poll_cq", 0, message);
    }
}
