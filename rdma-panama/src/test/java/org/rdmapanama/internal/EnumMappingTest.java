package org.rdmapanama.internal;

import org.junit.jupiter.api.Test;
import org.rdmapanama.device.AtomicCapability;
import org.rdmapanama.device.GidType;
import org.rdmapanama.device.LinkLayer;
import org.rdmapanama.device.Port;
import org.rdmapanama.device.PortState;
import org.rdmapanama.ffi.Rdma;
import org.rdmapanama.verbs.AsyncEventType;
import org.rdmapanama.verbs.WcOpcode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The public enums map C values without loading the libraries; this ties
 * those mappings to the generated constants (which AbiTest ties to the headers).
 */
class EnumMappingTest {
    @Test
    void completionOpcodesAndTheirSide() {
        int[] send = {Rdma.IBV_WC_SEND(), Rdma.IBV_WC_RDMA_WRITE(), Rdma.IBV_WC_RDMA_READ(), Rdma.IBV_WC_COMP_SWAP(),
                Rdma.IBV_WC_FETCH_ADD(), Rdma.IBV_WC_BIND_MW(), Rdma.IBV_WC_LOCAL_INV()};
        WcOpcode[] sendOps = {WcOpcode.SEND, WcOpcode.RDMA_WRITE, WcOpcode.RDMA_READ, WcOpcode.COMP_SWAP,
                WcOpcode.FETCH_ADD, WcOpcode.BIND_MW, WcOpcode.LOCAL_INV};
        for (int i = 0; i < send.length; i++) {
            assertEquals(sendOps[i], WcOpcode.of(send[i]));
            assertFalse(WcOpcode.of(send[i]).isReceive(), sendOps[i].name());
        }
        assertEquals(WcOpcode.RECV, WcOpcode.of(Rdma.IBV_WC_RECV()));
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, WcOpcode.of(Rdma.IBV_WC_RECV_RDMA_WITH_IMM()));
        assertTrue(WcOpcode.of(Rdma.IBV_WC_RECV()).isReceive());
        assertTrue(WcOpcode.of(Rdma.IBV_WC_RECV_RDMA_WITH_IMM()).isReceive());
        assertEquals(WcOpcode.UNKNOWN, WcOpcode.of(99));
    }

    @Test
    void gidTypes() {
        assertEquals(GidType.IB, GidType.of(Rdma.IBV_GID_TYPE_IB()));
        assertEquals(GidType.ROCE_V1, GidType.of(Rdma.IBV_GID_TYPE_ROCE_V1()));
        assertEquals(GidType.ROCE_V2, GidType.of(Rdma.IBV_GID_TYPE_ROCE_V2()));
        assertEquals(GidType.UNKNOWN, GidType.of(99));
    }

    @Test
    void portStates() {
        assertEquals(PortState.NOP, PortState.of(Rdma.IBV_PORT_NOP()));
        assertEquals(PortState.DOWN, PortState.of(Rdma.IBV_PORT_DOWN()));
        assertEquals(PortState.INIT, PortState.of(Rdma.IBV_PORT_INIT()));
        assertEquals(PortState.ARMED, PortState.of(Rdma.IBV_PORT_ARMED()));
        assertEquals(PortState.ACTIVE, PortState.of(Rdma.IBV_PORT_ACTIVE()));
        assertEquals(PortState.ACTIVE_DEFER, PortState.of(Rdma.IBV_PORT_ACTIVE_DEFER()));
        assertEquals(PortState.UNKNOWN, PortState.of(-1));
        assertEquals(PortState.UNKNOWN, PortState.of(42));
    }

    @Test
    void asyncEventTypes() {
        assertEquals(AsyncEventType.CQ_ERR, AsyncEventType.of(Rdma.IBV_EVENT_CQ_ERR()));
        assertEquals(AsyncEventType.QP_FATAL, AsyncEventType.of(Rdma.IBV_EVENT_QP_FATAL()));
        assertEquals(AsyncEventType.QP_ACCESS_ERR, AsyncEventType.of(Rdma.IBV_EVENT_QP_ACCESS_ERR()));
        assertEquals(AsyncEventType.DEVICE_FATAL, AsyncEventType.of(Rdma.IBV_EVENT_DEVICE_FATAL()));
        assertEquals(AsyncEventType.PORT_ERR, AsyncEventType.of(Rdma.IBV_EVENT_PORT_ERR()));
        assertEquals(AsyncEventType.SRQ_LIMIT_REACHED, AsyncEventType.of(Rdma.IBV_EVENT_SRQ_LIMIT_REACHED()));
        assertEquals(AsyncEventType.GID_CHANGE, AsyncEventType.of(Rdma.IBV_EVENT_GID_CHANGE()));
        assertEquals(AsyncEventType.WQ_FATAL, AsyncEventType.of(Rdma.IBV_EVENT_WQ_FATAL()));
        assertEquals(AsyncEventType.UNKNOWN, AsyncEventType.of(-1));
        assertEquals(AsyncEventType.UNKNOWN, AsyncEventType.of(Rdma.IBV_EVENT_WQ_FATAL() + 1));
    }

    @Test
    void linkLayers() {
        assertEquals(LinkLayer.UNSPECIFIED, LinkLayer.of(Rdma.IBV_LINK_LAYER_UNSPECIFIED()));
        assertEquals(LinkLayer.INFINIBAND, LinkLayer.of(Rdma.IBV_LINK_LAYER_INFINIBAND()));
        assertEquals(LinkLayer.ETHERNET, LinkLayer.of(Rdma.IBV_LINK_LAYER_ETHERNET()));
    }

    @Test
    void atomicCapabilities() {
        assertEquals(AtomicCapability.NONE, AtomicCapability.of(Rdma.IBV_ATOMIC_NONE()));
        assertEquals(AtomicCapability.HCA, AtomicCapability.of(Rdma.IBV_ATOMIC_HCA()));
        assertEquals(AtomicCapability.GLOBAL, AtomicCapability.of(Rdma.IBV_ATOMIC_GLOB()));
    }

    @Test
    void mtus() {
        assertEquals(256, Port.mtuBytes(Rdma.IBV_MTU_256()));
        assertEquals(512, Port.mtuBytes(Rdma.IBV_MTU_512()));
        assertEquals(1024, Port.mtuBytes(Rdma.IBV_MTU_1024()));
        assertEquals(2048, Port.mtuBytes(Rdma.IBV_MTU_2048()));
        assertEquals(4096, Port.mtuBytes(Rdma.IBV_MTU_4096()));
    }

    @Test
    void errnoNames() {
        assertEquals(Errno.ENOSYS, 38);
        assertEquals("ENOMEM (Cannot allocate memory)", Errno.describe(12));
        assertEquals("errno 200 (Unknown error 200)", Errno.describe(200));
    }
}
