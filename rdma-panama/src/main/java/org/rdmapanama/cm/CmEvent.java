package org.rdmapanama.cm;

import java.lang.foreign.MemorySegment;

/**
 * A copy of one {@code struct rdma_cm_event}, taken before it is acked (the
 * private data lives only until then).
 *
 * @param type        the event
 * @param status      the event's status: 0, a negative errno, or for REJECTED the IB/iWARP reject reason
 * @param id          the cm_id it is for (a new one for CONNECT_REQUEST)
 * @param privateData the peer's private data (CONNECT_REQUEST, ESTABLISHED, REJECTED), possibly empty
 * @param responderResources the peer's responder resources (CONNECT_REQUEST)
 * @param initiatorDepth     the peer's initiator depth (CONNECT_REQUEST)
 */
record CmEvent(CmEventType type, int status, MemorySegment id, byte[] privateData,
               int responderResources, int initiatorDepth) {
}
