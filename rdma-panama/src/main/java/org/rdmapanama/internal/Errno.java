package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * errno: the constants this runtime tests for, their names and texts, and
 * the one place that builds a failure message, {@code "VERB on WHAT failed: ENAME (text)"}.
 */
public final class Errno {
    private Errno() {}

    // Linux x86-64 values (asm-generic/errno-base.h, errno.h).
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EINVAL = 22;
    public static final int ENOSYS = 38;
    public static final int ENODATA = 61;
    public static final int EOPNOTSUPP = 95;

    // The errnos verbs and rdma_cm report in practice; others print as a number.
    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(EPERM, "EPERM"), Map.entry(ENOENT, "ENOENT"), Map.entry(EINTR, "EINTR"),
            Map.entry(EIO, "EIO"), Map.entry(EBADF, "EBADF"), Map.entry(EAGAIN, "EAGAIN"), Map.entry(ENOMEM, "ENOMEM"),
            Map.entry(13, "EACCES"), Map.entry(14, "EFAULT"), Map.entry(16, "EBUSY"),
            Map.entry(17, "EEXIST"), Map.entry(19, "ENODEV"), Map.entry(EINVAL, "EINVAL"),
            Map.entry(24, "EMFILE"), Map.entry(28, "ENOSPC"), Map.entry(ENOSYS, "ENOSYS"), Map.entry(ENODATA, "ENODATA"),
            Map.entry(71, "EPROTO"), Map.entry(EOPNOTSUPP, "EOPNOTSUPP"), Map.entry(98, "EADDRINUSE"),
            Map.entry(99, "EADDRNOTAVAIL"), Map.entry(101, "ENETUNREACH"), Map.entry(104, "ECONNRESET"),
            Map.entry(110, "ETIMEDOUT"), Map.entry(111, "ECONNREFUSED"), Map.entry(113, "EHOSTUNREACH"));

    private static final MethodHandle STRERROR = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("strerror"),
            FunctionDescriptor.of(ADDRESS, JAVA_INT));

    /** For example {@code "ENOMEM (Cannot allocate memory)"}. */
    public static String describe(int errno) {
        String name = NAMES.getOrDefault(errno, "errno " + errno);
        return name + " (" + strerror(errno) + ")";
    }

    /**
     * {@code "VERB on WHAT failed: ENAME (text)"} ({@code "VERB failed: ..."}
     * when {@code what} is empty). Provider libraries sometimes fail in user
     * space without setting errno (libsiw does, on a bad mmap key): 0 says so.
     */
    public static String message(String verb, String what, int errno) {
        String why = errno == 0 ? "the provider library refused it without an errno (VERBS_LOG_LEVEL=5 may say why)"
                : describe(errno);
        return verb + (what == null || what.isEmpty() ? "" : " on " + what) + " failed: " + why;
    }

    /** The exception for {@link #message}; {@code errno} may be given negated, as the inline verbs return it. */
    public static RdmaException failure(String verb, String what, int errno) {
        return failure(verb, what, errno, "");
    }

    /** Like {@link #failure(String, String, int)}, with {@code hint} appended (say, what the errno usually means here). */
    public static RdmaException failure(String verb, String what, int errno, String hint) {
        int e = Math.abs(errno);
        return new RdmaException(verb, e, message(verb, what, e) + hint);
    }

    private static String strerror(int errno) {
        try {
            MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
            return s.reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "unknown error";
        }
    }
}
