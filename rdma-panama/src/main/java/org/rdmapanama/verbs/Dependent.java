package org.rdmapanama.verbs;

/**
 * What a resource records as its user ({@link NativeResource#addUser}) when
 * the dependent does not exist yet: a QP holds its CQs before
 * {@code ibv_create_qp}, so they cannot close between that call and the
 * wrapper. It names the dependent in a refused close once it is built.
 */
final class Dependent {
    private volatile String name;

    Dependent(String name) {
        this.name = name;
    }

    void name(String name) {
        this.name = name;
    }

    @Override
    public String toString() {
        return name;
    }
}
