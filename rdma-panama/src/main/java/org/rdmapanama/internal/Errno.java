package org.rdmapanama.internal;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/** errno names and texts, for error messages. */
public final class Errno {
    private Errno() {}

    // The errnos verbs and rdma_cm report in practice; others print as a number.
    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(1, "EPERM"), Map.entry(2, "ENOENT"), Map.entry(4, "EINTR"),
            Map.entry(5, "EIO"), Map.entry(11, "EAGAIN"), Map.entry(12, "ENOMEM"),
            Map.entry(13, "EACCES"), Map.entry(14, "EFAULT"), Map.entry(16, "EBUSY"),
            Map.entry(17, "EEXIST"), Map.entry(19, "ENODEV"), Map.entry(22, "EINVAL"),
            Map.entry(24, "EMFILE"), Map.entry(28, "ENOSPC"), Map.entry(38, "ENOSYS"), Map.entry(61, "ENODATA"),
            Map.entry(71, "EPROTO"), Map.entry(95, "EOPNOTSUPP"), Map.entry(98, "EADDRINUSE"),
            Map.entry(99, "EADDRNOTAVAIL"), Map.entry(101, "ENETUNREACH"), Map.entry(104, "ECONNRESET"),
            Map.entry(110, "ETIMEDOUT"), Map.entry(111, "ECONNREFUSED"), Map.entry(113, "EHOSTUNREACH"));

    public static final int ENOENT = 2;
    public static final int EINVAL = 22;
    public static final int ENOSYS = 38;
    public static final int ENODATA = 61;
    public static final int EOPNOTSUPP = 95;

    private static final MethodHandle STRERROR = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("strerror"),
            FunctionDescriptor.of(ADDRESS, JAVA_INT));

    /** For example {@code "ENOMEM (Cannot allocate memory)"}. */
    public static String describe(int errno) {
        String name = NAMES.getOrDefault(errno, "errno " + errno);
        return name + " (" + strerror(errno) + ")";
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
