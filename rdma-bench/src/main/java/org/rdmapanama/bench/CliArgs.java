package org.rdmapanama.bench;

import org.rdmapanama.error.NoRdmaDeviceException;
import org.rdmapanama.error.NoSuchDeviceException;
import picocli.CommandLine;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.UnmatchedArgumentException;

import java.io.PrintStream;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What every subcommand does around its work ({@link #run}: parse, usage, run, exit status) and the
 * picocli parsing of their command lines into an object with {@code @Option} fields; errors become
 * one-line {@link IllegalArgumentException}s that name the flag as the user spelled it. Usage texts
 * stay hand-written, in the native tools' layout. The perftest tests and rping, whose flags are the
 * native tools' getopt ones, read theirs with {@link Getopt} instead, behind the same {@link #run}.
 * <p>
 * Exit status, the one mapping ({@link #exitStatus}): {@link #OK}; {@link #USAGE} for a bad command line,
 * one that cannot work as given ({@link UsageException}) or no device to use; {@link #FAILED} when
 * anything else fails, an RDMA operation or the peer.
 */
public final class CliArgs {
    private CliArgs() {}

    public static final int OK = 0;
    public static final int FAILED = 1;
    public static final int USAGE = 2;

    /** Where a converter's message names the flag; {@link #parse} puts the spelling the user typed there. */
    public static final String FLAG = "{flag}";

    /** A subcommand's work on its parsed options: an exit status; what it throws, {@link #run} reports. */
    @FunctionalInterface
    public interface Body<O> {
        int run(O options) throws Exception;
    }

    /**
     * What every subcommand does around its work: {@code parse} (null for {@code -h}, an
     * IllegalArgumentException for a bad command line), the usage on {@code -h} (OK) or after
     * "rdma-bench NAME: why" on a bad command line (USAGE), then {@code body}, whose failure is
     * reported as "rdma-bench NAME: why" with its {@link #exitStatus}; an interrupt ends it with
     * "rdma-bench NAME: interrupted" (FAILED).
     */
    public static <O> int run(String name, String[] args, PrintStream out, PrintStream err, Function<String[], O> parse,
                              Consumer<PrintStream> usage, Body<O> body) {
        O options;
        try {
            options = parse.apply(args);
        } catch (IllegalArgumentException e) {
            err.println("rdma-bench " + name + ": " + e.getMessage());
            usage.accept(err);
            return USAGE;
        }
        if (options == null) {
            usage.accept(out);
            return OK;
        }
        try {
            return body.run(options);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("rdma-bench " + name + ": interrupted");
            return FAILED;
        } catch (Exception e) {
            err.println("rdma-bench " + name + ": " + (e.getMessage() != null ? e.getMessage() : e));
            return exitStatus(e);
        }
    }

    /** The exit status of a subcommand that failed with {@code e}: see the class comment. */
    public static int exitStatus(Exception e) {
        return e instanceof UsageException || e instanceof NoRdmaDeviceException || e instanceof NoSuchDeviceException
                ? USAGE : FAILED;
    }

    /**
     * Fills {@code options} from {@code args}; false if {@code -h} was asked for.
     *
     * @throws IllegalArgumentException with a one-line message naming the bad flag or value
     */
    public static boolean parse(Object options, String[] args) {
        CommandLine cl = new CommandLine(options)
                .setCaseInsensitiveEnumValuesAllowed(true)
                .setOverwrittenOptionsAllowed(true) // the last of a repeated flag wins, as with getopt
                .setExpandAtFiles(false);           // "@x" is an argument, not a file to read arguments from
        try {
            return !cl.parseArgs(args).isUsageHelpRequested();
        } catch (ParameterException e) {
            throw new IllegalArgumentException(message(e, args), e);
        }
    }

    private static String message(ParameterException e, String[] args) {
        if (e instanceof UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
            String a = u.getUnmatched().getFirst();
            return (a.startsWith("-") ? "unknown option '" : "unexpected argument '") + a + "'";
        }
        if (e instanceof MissingParameterException m && !m.getMissing().isEmpty()
                && m.getMissing().getFirst() instanceof OptionSpec os) {
            return "option " + typed(os, args) + " needs a value";
        }
        if (e.getArgSpec() instanceof OptionSpec os && e.getCause() instanceof TypeConversionException t) {
            String flag = typed(os, args);
            if (t.getMessage().contains(FLAG)) {
                return t.getMessage().replace(FLAG, flag);
            }
            // picocli's own converters: for a flag without a value, "-R=1" fails as "'1' is not a boolean"
            boolean flagOnly = os.type() == boolean.class || os.type() == Boolean.class;
            return "option " + flag + (flagOnly ? " takes no value" : ": " + t.getMessage());
        }
        return e.getMessage().strip().replace('\n', ' ');
    }

    /** The spelling of {@code os} in {@code args} ({@code -s} or {@code --size}); picocli reports only the option. */
    private static String typed(OptionSpec os, String[] args) {
        String found = null;
        for (String a : args) {
            for (String n : os.names()) {
                boolean attached = n.length() == 2 && !a.startsWith("--") && a.startsWith(n); // -s64
                if (a.equals(n) || a.startsWith(n + "=") || attached) {
                    found = n;
                }
            }
        }
        return found != null ? found : os.longestName();
    }

    /** A number in {@code min..max}, read as {@link Getopt#number} reads it (C's strtol, as the native tools do). */
    public abstract static class Range implements ITypeConverter<Integer> {
        private final int min;
        private final int max;

        protected Range(int min, int max) {
            this.min = min;
            this.max = max;
        }

        @Override
        public Integer convert(String v) {
            try {
                return Getopt.number(FLAG, v, min, max);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    // The limits that the Getopt-read command lines share with these converters.
    public static final int PORT_MIN = 1, PORT_MAX = 65535;
    public static final int IB_PORT_MIN = 1, IB_PORT_MAX = 255;
    public static final int GID_INDEX_MIN = 0, GID_INDEX_MAX = 65535;

    public static final class Port extends Range {
        Port() {
            super(PORT_MIN, PORT_MAX);
        }
    }

    public static final class IbPort extends Range {
        IbPort() {
            super(IB_PORT_MIN, IB_PORT_MAX);
        }
    }

    public static final class GidIndex extends Range {
        GidIndex() {
            super(GID_INDEX_MIN, GID_INDEX_MAX);
        }
    }

    public static final class NonEmpty implements ITypeConverter<String> {
        @Override
        public String convert(String v) {
            try {
                return Getopt.nonEmpty(FLAG, v);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
