/**
 * {@link org.rdmapanama.error.RdmaException}, the failure every layer throws,
 * {@code org.rdmapanama.internal}'s checked C calls included. It sits in a
 * package of its own that depends on nothing else here, so that
 * {@code internal} can throw it without a package cycle.
 */
package org.rdmapanama.error;
