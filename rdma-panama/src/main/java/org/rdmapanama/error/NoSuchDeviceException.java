package org.rdmapanama.error;


/** No device matches the configuration; the message lists every device and why it was rejected. */
public final class NoSuchDeviceException extends RdmaException {
    public NoSuchDeviceException(String message) {
        super(message);
    }
}
