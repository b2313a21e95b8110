package org.rdmapanama.nettybench;

import java.util.concurrent.CompletableFuture;

/** A side's client: its connections to the server and the runs over them. */
@SuppressWarnings("try") // close() waits for Netty: InterruptedException
interface Driver extends AutoCloseable {
    /** Opens connections until there are {@code n}. */
    void connect(int n) throws Exception;

    /**
     * A run of {@code nanos} over the first {@code c.connections()} connections, {@code c.window()} requests
     * outstanding on each; {@code mode} picks among {@link #series()} (gRPC: unary or stream).
     */
    CompletableFuture<Load> run(int mode, Result.Case c, long nanos, boolean record);

    /** The server's process CPU time, ns; with {@code stop} the server exits after it answered. */
    long serverCpu(boolean stop) throws Exception;

    /** The server's JIT compile time so far, ms; -1 where the side cannot ask (gRPC). */
    default long serverJit() throws Exception {
        return -1;
    }

    /** The series names of the modes, in mode order. */
    java.util.List<String> series();

    @Override
    void close() throws Exception;
}
