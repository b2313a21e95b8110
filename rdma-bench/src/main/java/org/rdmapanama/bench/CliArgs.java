package org.rdmapanama.bench;

/** Option values for the perftest- and pingpong-style commands. */
final class CliArgs {
    private CliArgs() {}

    /**
     * A number in {@code min..max}, read like C's {@code strtol(v, NULL, 0)} that
     * perftest and ibv_rc_pingpong use (so {@code 0x10} works); otherwise an
     * {@link IllegalArgumentException} naming the option.
     */
    static int number(String flag, String v, int min, int max) {
        long n;
        try {
            n = Long.decode(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option " + flag + " needs a number, got '" + v + "'");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException("option " + flag + " must be " + min + ".." + max + ", got " + v);
        }
        return (int) n;
    }
}
