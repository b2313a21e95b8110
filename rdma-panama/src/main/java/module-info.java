/**
 * rdma-panama: RDMA verbs and rdma_cm for Java over the FFM API.
 * {@code org.rdmapanama.internal} is the only package that touches the
 * jextract bindings; it is not exported.
 */
module org.rdmapanama {
    requires org.rdmapanama.ffi;
    requires org.slf4j;

    exports org.rdmapanama;
    exports org.rdmapanama.cm;
}
