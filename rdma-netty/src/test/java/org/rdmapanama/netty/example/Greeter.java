package org.rdmapanama.netty.example;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * A gRPC service written by hand: two methods whose messages are raw bytes.
 * No .proto and no protoc: the transport sees only HTTP/2 frames, so a byte[]
 * marshaller tests it as fully as protobuf would, without a code generator
 * (a native protoc fetched per platform) and the protobuf runtime in the build.
 */
final class Greeter {
    static final String SERVICE = "rdmapanama.example.Greeter";

    /** Bytes in, bytes out: what generated code's marshaller does after protobuf's encoding. */
    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    /** Unary: a name in, "hello, " + name out. */
    static final MethodDescriptor<byte[], byte[]> SAY_HELLO = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "SayHello"))
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    /** Server streaming: a 4-byte count n and a size s in, n replies of s bytes out, reply i filled with (byte) i. */
    static final MethodDescriptor<byte[], byte[]> COUNT = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Count"))
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    private Greeter() {
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static ServerServiceDefinition service() {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(SAY_HELLO, ServerCalls.asyncUnaryCall((request, replies) -> {
                    replies.onNext(utf8("hello, " + utf8(request)));
                    replies.onCompleted();
                }))
                .addMethod(COUNT, ServerCalls.asyncServerStreamingCall((request, replies) -> {
                    var in = java.nio.ByteBuffer.wrap(request);
                    int n = in.getInt();
                    int size = in.getInt();
                    for (int i = 0; i < n; i++) {
                        byte[] reply = new byte[size];
                        java.util.Arrays.fill(reply, (byte) i);
                        replies.onNext(reply);
                    }
                    replies.onCompleted();
                }))
                .build();
    }
}
