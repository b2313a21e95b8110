/** Benchmarks and the perftest-compatible CLI; uses only rdma-panama's public API. */
module org.rdmapanama.bench {
    requires org.rdmapanama;
    requires jmh.core;
    requires info.picocli;
    requires HdrHistogram; // an automatic module, named after its jar
    // picocli fills the @Option fields of the command-line classes by reflection.
    opens org.rdmapanama.bench to info.picocli;
    opens org.rdmapanama.bench.rcpingpong to info.picocli;
    opens org.rdmapanama.bench.scale to info.picocli;
    opens org.rdmapanama.bench.failover to info.picocli;
    opens org.rdmapanama.bench.report to info.picocli;
    requires org.jfree.jfreechart;
    requires java.desktop;
    // ChannelBenchmark's ThreadBytes: heap bytes per thread (com.sun.management.ThreadMXBean).
    requires jdk.management;
}
