package org.rdmapanama.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A command line read as C's {@code getopt_long(3)} reads perftest's and
 * rping's: short flags grouped ({@code -aR}), a short option's value attached
 * or next ({@code -s64}, {@code -s 64}, never {@code -s=64}), {@code --name=value}
 * or {@code --name value}, a long name shortened to any prefix that names one
 * option ({@code --iter}), operands anywhere, {@code --} ending the options, the
 * last of a repeated option winning. Errors are one-line
 * {@link IllegalArgumentException}s that name the option as typed.
 * <p>
 * Hand-written rather than picocli (which the other subcommands use), for the
 * perftest tests and rping: a server's start-up parses this first, and
 * picocli's 160 classes (class file version 49, which the AOT cache cannot
 * hold) are a large part of a cold start, in the lab most of all.
 */
public final class Getopt {
    /** What an option does with its value (null for a flag), given the option's name as typed. */
    @FunctionalInterface
    public interface Action {
        void apply(String typed, String value);
    }

    private record Opt(boolean takesValue, Action action) {}

    private final Map<String, Opt> options = new HashMap<>();

    /** A flag without a value, e.g. {@code "-R", "--rdma_cm"}. */
    public Getopt flag(Runnable action, String... names) {
        return add(new Opt(false, (typed, v) -> action.run()), names);
    }

    /**
     * {@code -h}, and where a benchmark runs: {@code -d DEV} or {@code --transport T} (the runtime's device
     * selection), and {@code -p PORT}.
     */
    public Getopt endpoint(Runnable help, Consumer<String> device, Consumer<String> transport, IntSetter port) {
        return flag(help, "-h", "--help")
                .value(nonEmpty(device), "-d", "--ib-dev")
                .value(nonEmpty(transport), "--transport")
                .value(number(1, 65535, port), "-p", "--port");
    }

    /** An option with a value, e.g. {@code "-s", "--size"}. */
    public Getopt value(Action action, String... names) {
        return add(new Opt(true, action), names);
    }

    private Getopt add(Opt opt, String... names) {
        for (String n : names) {
            if (options.putIfAbsent(n, opt) != null) {
                throw new IllegalStateException("option " + n + " declared twice");
            }
        }
        return this;
    }

    /** Applies the options in {@code args} in order; returns the operands. */
    public List<String> parse(String[] args) {
        List<String> operands = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--")) {
                operands.addAll(List.of(args).subList(i + 1, args.length));
                break;
            } else if (a.startsWith("--")) {
                int eq = a.indexOf('=');
                String name = longName(eq < 0 ? a : a.substring(0, eq));
                Opt opt = lookup(name);
                if (!opt.takesValue) {
                    if (eq >= 0) {
                        throw new IllegalArgumentException("option " + name + " takes no value");
                    }
                    opt.action.apply(name, null);
                } else if (eq >= 0) {
                    opt.action.apply(name, a.substring(eq + 1));
                } else {
                    opt.action.apply(name, next(args, ++i, name));
                }
            } else if (a.startsWith("-") && a.length() > 1) {
                i = shortGroup(args, i);
            } else {
                operands.add(a);
            }
        }
        return operands;
    }

    /** {@code -aR}, {@code -s64}, {@code -s 64}: returns the index of the last argument used. */
    private int shortGroup(String[] args, int i) {
        String a = args[i];
        for (int c = 1; c < a.length(); c++) {
            String name = "-" + a.charAt(c);
            Opt opt = lookup(name);
            if (opt.takesValue) {
                if (c + 1 < a.length()) {
                    String value = a.substring(c + 1);
                    if (value.startsWith("=")) {
                        // getopt would take "=x" as the value; say so rather than fail on "=rxe0" later
                        throw new IllegalArgumentException("option " + name + " takes its value as " + name + " "
                                + value.substring(1) + " or " + name + value.substring(1) + ", not " + name + value);
                    }
                    opt.action.apply(name, value);
                    return i;
                }
                opt.action.apply(name, next(args, i + 1, name));
                return i + 1;
            }
            if (c + 1 < a.length() && a.charAt(c + 1) == '=') {
                throw new IllegalArgumentException("option " + name + " takes no value");
            }
            opt.action.apply(name, null);
        }
        return i;
    }

    /** {@code typed} itself if declared, else the one long name it is a prefix of (getopt_long's abbreviations). */
    private String longName(String typed) {
        if (options.containsKey(typed)) {
            return typed;
        }
        List<String> matches = new ArrayList<>();
        for (String n : options.keySet()) {
            if (n.startsWith("--") && n.startsWith(typed)) {
                matches.add(n);
            }
        }
        if (matches.size() > 1) {
            matches.sort(null);
            throw new IllegalArgumentException("option '" + typed + "' is ambiguous: " + String.join(", ", matches));
        }
        return matches.isEmpty() ? typed : matches.getFirst();
    }

    private Opt lookup(String name) {
        Opt opt = options.get(name);
        if (opt == null) {
            throw new IllegalArgumentException("unknown option '" + name + "'");
        }
        return opt;
    }

    private static String next(String[] args, int i, String name) {
        if (i >= args.length) {
            throw new IllegalArgumentException("option " + name + " needs a value");
        }
        return args[i];
    }

    /**
     * A number in {@code min..max}, read like C's {@code strtol(v, NULL, 0)} that
     * perftest uses (so {@code 0x10} and octal {@code 010} work).
     */
    /** The server's address of a client (the one operand), or null for a server (none). */
    public static String serverOperand(List<String> operands) {
        if (operands.size() > 1) {
            throw new IllegalArgumentException("one operand at most, the server's address; got " + operands);
        }
        return operands.isEmpty() ? null : operands.get(0);
    }

    public static int number(String typed, String v, int min, int max) {
        long n;
        try {
            n = Long.decode(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option " + typed + " needs a number, got '" + v + "'");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException("option " + typed + " must be " + min + ".." + max + ", got " + v);
        }
        return (int) n;
    }

    /** {@code v}, unless blank. */
    public static String nonEmpty(String typed, String v) {
        if (v.isBlank()) {
            throw new IllegalArgumentException("option " + typed + " needs a non-empty value");
        }
        return v;
    }

    /** An {@link Action} that reads a number in {@code min..max} and hands it on. */
    public static Action number(int min, int max, IntSetter set) {
        return (typed, v) -> set.set(number(typed, v, min, max));
    }

    /** An {@link Action} that hands on a non-blank value. */
    public static Action nonEmpty(Consumer<String> set) {
        return (typed, v) -> set.accept(nonEmpty(typed, v));
    }

    @FunctionalInterface
    public interface IntSetter {
        void set(int value);
    }
}
