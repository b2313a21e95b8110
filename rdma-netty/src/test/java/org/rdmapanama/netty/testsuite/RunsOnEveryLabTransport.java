package org.rdmapanama.netty.testsuite;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a class of Netty's test suite once per lab transport: its constructor
 * takes the {@link org.rdmapanama.device.Transport}, and its permutation is
 * {@link RdmaSocketTestPermutation#on} it.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ParameterizedClass(name = "{0}")
@MethodSource("org.rdmapanama.testkit.LabDevices#transports")
@ExtendWith(RdmaSocketTestPermutation.Cleanup.class)
@interface RunsOnEveryLabTransport {
}
