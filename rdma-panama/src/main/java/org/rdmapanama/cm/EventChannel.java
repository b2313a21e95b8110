package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Cm;
import org.rdmapanama.internal.CmStructs;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.Posix;
import org.rdmapanama.verbs.NativeResource;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * {@code struct rdma_event_channel}: where a cm_id's events arrive. Its fd is
 * non-blocking; one {@link CmEventLoop} thread polls it and reads the events.
 */
final class EventChannel extends NativeResource {
    private final int fd;

    private EventChannel(Native channel) throws RdmaException {
        super("rdma_cm event channel", channel, null);
        this.fd = CmStructs.channelFd(handle());
        Posix.setNonBlocking(fd, description()); // if it throws, own() destroys the channel
    }

    static EventChannel create() throws RdmaException {
        org.rdmapanama.internal.NativeLibraries.require();
        return own(Cm.CREATE_EVENT_CHANNEL.pointer(""), CmStructs.EVENT_CHANNEL_SIZE,
                Cm::destroyEventChannel, EventChannel::new);
    }

    MemorySegment channel() {
        return handle();
    }

    int fd() {
        return fd;
    }

    /**
     * The next event, not yet acked, or null when none is waiting. The caller
     * copies it and acks it with {@link #ack}: until then rdma_destroy_id of
     * its cm_id blocks.
     */
    MemorySegment poll(MemorySegment out) throws RdmaException {
        int rc = Cm.GET_CM_EVENT.call(handle(), out);
        if (rc == -Errno.EAGAIN) {
            return null;
        }
        if (rc < 0) {
            throw Errno.failure("rdma_get_cm_event", description(), rc);
        }
        return out.get(ADDRESS, 0).reinterpret(CmStructs.CM_EVENT_SIZE);
    }

    static void ack(MemorySegment ev) throws RdmaException {
        Cm.ACK_CM_EVENT.status("", ev);
    }

    /** The cm_id the event is dispatched to: the listening one for CONNECT_REQUEST. */
    static MemorySegment target(MemorySegment ev) {
        return CmStructs.eventType(ev) == CmEventType.CONNECT_REQUEST.ordinal()
                ? CmStructs.eventListenId(ev) : CmStructs.eventId(ev);
    }

    static CmEvent copy(MemorySegment ev) {
        CmEventType type = CmEventType.of(CmStructs.eventType(ev));
        byte[] data = new byte[0];
        int responder = 0;
        int initiator = 0;
        // param is a union: conn is meaningful for these events only.
        if (type == CmEventType.CONNECT_REQUEST || type == CmEventType.ESTABLISHED
                || type == CmEventType.REJECTED || type == CmEventType.CONNECT_RESPONSE) {
            data = CmStructs.eventPrivateData(ev);
            responder = CmStructs.eventResponderResources(ev);
            initiator = CmStructs.eventInitiatorDepth(ev);
        }
        return new CmEvent(type, CmStructs.eventStatus(ev), CmStructs.eventId(ev), data, responder, initiator);
    }

    @Override
    protected void destroy(MemorySegment raw) throws RdmaException {
        Cm.destroyEventChannel(raw);
    }
}
