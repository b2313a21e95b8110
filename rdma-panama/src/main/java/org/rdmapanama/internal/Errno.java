package org.rdmapanama.internal;

import org.rdmapanama.error.RdmaException;

import java.util.Map;


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

    /** For example {@code "ENOMEM (Cannot allocate memory)"}. */
    public static String describe(int errno) {
        String name = NAMES.getOrDefault(errno, "errno " + errno);
        return name + " (" + Libc.strerror(errno) + ")";
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

    /**
     * A native wrapper's result, {@code >= 0} on success or {@code -errno}:
     * returned as is, or thrown as {@link #failure} naming {@code function}.
     */
    public static int check(int result, String function, String what) throws RdmaException {
        if (result < 0) {
            throw failure(function, what, result);
        }
        return result;
    }

    /**
     * A verb's status (0, or the errno value; a provider may also answer -errno,
     * or -1, which reads as EPERM) in this package's convention: 0 or -errno.
     */
    public static int ofStatus(int status) {
        return status > 0 ? -status : status;
    }

    /**
     * The one failure of a native call: {@code result} is what its wrapper
     * returned, {@code -errno} (0 when the C side gave no errno), and the
     * message is {@link #message}'s.
     */
    public static RdmaException failure(String function, String what, int result) {
        return failure(function, what, result, "");
    }

    /** Like {@link #failure(String, String, int)}, with {@code hint} appended (say, what the errno usually means here). */
    public static RdmaException failure(String function, String what, int result, String hint) {
        if (result > 0) {
            throw new IllegalArgumentException(function + ": a failure is -errno, got " + result);
        }
        int errno = -result;
        return new RdmaException(function, errno, message(function, what, errno) + hint);
    }
}
