/**
 * rdma-panama: RDMA verbs and rdma_cm for Java over the FFM API.
 * {@code org.rdmapanama.internal} (not exported) is the only package that
 * uses the generated bindings: it links the C functions and reads and writes
 * the C structs, behind static methods. {@code org.rdmapanama.error}
 * (RdmaException) is under all of them, internal included;
 * {@code org.rdmapanama.device} is discovery, configuration and transport
 * selection; {@code org.rdmapanama.verbs} the verbs objects on it;
 * {@code org.rdmapanama.cm} connections on those; {@code org.rdmapanama.failover}
 * moves a connection between transports; {@code org.rdmapanama.channel} carries
 * messages over connections, on the public verbs and cm layers only. No package cycles.
 */
module org.rdmapanama {
    requires org.rdmapanama.ffi;
    requires org.slf4j;

    exports org.rdmapanama.error;
    exports org.rdmapanama.device;
    exports org.rdmapanama.verbs;
    exports org.rdmapanama.cm;
    exports org.rdmapanama.failover;
    exports org.rdmapanama.channel;
}
