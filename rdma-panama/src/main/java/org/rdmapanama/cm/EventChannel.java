package org.rdmapanama.cm;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Cm;
import org.rdmapanama.internal.CmStructs;
import org.rdmapanama.internal.Errno;
import org.rdmapanama.internal.Ownership;
import org.rdmapanama.internal.Posix;
import org.rdmapanama.internal.ResourceLifecycle;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * {@code struct rdma_event_channel}: where a cm_id's events arrive. Its fd is
 * non-blocking; one {@link CmEventLoop} thread polls it and reads the events.
 */
final class EventChannel implements AutoCloseable, ResourceLifecycle.Hooks {
    private final ResourceLifecycle life;
    private final int fd;

    private EventChannel(Ownership.Pending channel) throws RdmaException {
        this.life = new ResourceLifecycle("rdma_cm event channel", channel, null, this);
        this.fd = CmStructs.channelFd(life.handle());
        Posix.setNonBlocking(fd, life.description()); // if it throws, own() destroys the channel
    }

    static EventChannel create() throws RdmaException {
        org.rdmapanama.internal.NativeLibraries.require();
        return Ownership.own(Cm.CREATE_EVENT_CHANNEL.pointer(""), CmStructs.EVENT_CHANNEL_SIZE, false,
                Cm::destroyEventChannel, EventChannel::new);
    }

    MemorySegment channel() {
        return life.handle();
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
        int rc = Cm.GET_CM_EVENT.call(life.handle(), out);
        if (rc == -Errno.EAGAIN) {
            return null;
        }
        if (rc < 0) {
            throw Errno.failure("rdma_get_cm_event", life.description(), rc);
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
    public void close() throws RdmaException {
        life.close(CmId.CALL_WAIT);
    }

    @Override
    public void destroy(MemorySegment raw) {
        Cm.destroyEventChannel(raw);
    }

    @Override
    public String toString() {
        return life.toString();
    }
}
