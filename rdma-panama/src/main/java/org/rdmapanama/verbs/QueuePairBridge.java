package org.rdmapanama.verbs;

import org.rdmapanama.error.RdmaException;
import org.rdmapanama.internal.Bridge;

import java.lang.foreign.MemorySegment;

/** What the cm layer needs of verbs; registered by {@link NativeResource}'s static initializer (creating it does not initialize {@link QueuePair}). */
final class QueuePairBridge implements Bridge.Verbs<DeviceContext, ProtectionDomain, QueuePair, QueuePairConfig> {
    @Override
    public DeviceContext borrowContext(MemorySegment ibvContext) throws RdmaException {
        return DeviceContext.borrow(ibvContext);
    }

    @Override
    public DeviceContext borrowContext(MemorySegment ibvContext, Bridge.Destroyer release) throws RdmaException {
        return DeviceContext.borrow(ibvContext, release::destroy);
    }

    @Override
    public void fillQpInitAttr(MemorySegment attr, ProtectionDomain pd, QueuePairConfig config) {
        QueuePairInit.fill(attr, pd, config);
    }

    @Override
    public QueuePair createQueuePair(ProtectionDomain pd, QueuePairConfig config, MemorySegment initAttr,
                                     Bridge.QpMaker make, Bridge.Destroyer destroyer) throws RdmaException {
        return QueuePair.own(pd, config, initAttr, make, destroyer);
    }
}
