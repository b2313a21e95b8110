package org.rdmapanama.channel;

/**
 * Something handed to a loop thread through its {@link TaskQueue}: a send or
 * a release from another thread (the buffer or message itself is the node,
 * so a hand-over allocates nothing), or a rarer control task.
 */
abstract class LoopTask {
    volatile LoopTask handoffNext;

    /** Control tasks; buffers and messages are dispatched by type instead. */
    void run() {
        throw new IllegalStateException(getClass() + " is not runnable");
    }

    static LoopTask of(Runnable r) {
        return new LoopTask() {
            @Override
            void run() {
                r.run();
            }
        };
    }
}
