package org.rdmapanama.bench;

/**
 * A command line that parsed but cannot work as given, found when it runs: a device whose transport the
 * command cannot use, say. Exits with {@link CliArgs#USAGE}, as a bad flag does.
 */
public final class UsageException extends IllegalArgumentException {
    public UsageException(String message) {
        super(message);
    }
}
