package org.rdmapanama.channel;

/**
 * What a channel does with what arrives. Every method runs on the channel's
 * loop thread, which serves many channels: it must not block. A handler
 * that throws closes its channel with that exception as the cause.
 */
@FunctionalInterface
public interface MessageHandler {
    /** A message, in the order sent; {@link Message#release()} it when done (here or later, on any thread). */
    void onMessage(MessageChannel channel, Message message) throws Exception;

    /** The channel is connected (after connect or accept), before its first message. */
    default void onOpen(MessageChannel channel) throws Exception {}

    /** {@link MessageChannel#isWritable()} changed. */
    default void onWritabilityChanged(MessageChannel channel) throws Exception {}

    /**
     * The peer shut its output down ({@link MessageChannel#shutdownOutput()}): every message it sent has come.
     * This side may still send.
     */
    default void onInputShutdown(MessageChannel channel) throws Exception {}

    /** The channel is closed: {@code cause} is null after a graceful close by either side. */
    default void onClose(MessageChannel channel, Throwable cause) {}
}
