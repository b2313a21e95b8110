/**
 * rdma-panama: RDMA verbs and rdma_cm for Java over the FFM API.
 * {@code org.rdmapanama.internal} (not exported) is the only package that
 * links C functions; the others read and write C structs through the
 * generated layouts. {@code org.rdmapanama.device} is discovery, configuration
 * and transport selection; {@code org.rdmapanama} the verbs objects on it;
 * {@code org.rdmapanama.cm} connections on those; {@code org.rdmapanama.error}
 * (RdmaException) under all of them, internal included. No package cycles.
 */
module org.rdmapanama {
    requires org.rdmapanama.ffi;
    requires org.slf4j;

    exports org.rdmapanama.error;
    exports org.rdmapanama.device;
    exports org.rdmapanama.verbs;
    exports org.rdmapanama.cm;
    exports org.rdmapanama.failover;
}
