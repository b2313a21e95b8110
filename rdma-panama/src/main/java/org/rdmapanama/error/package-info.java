/**
 * The failures every layer throws: {@link org.rdmapanama.error.RdmaException}
 * (a C call failed, with its name and errno), the use of a closed resource,
 * a close that was refused or gave up, an operation the transport lacks, no
 * or no such device. It depends on nothing else here, so that every layer,
 * {@code org.rdmapanama.internal} included, can throw them without a package
 * cycle. An exception that carries a layer's own types lives in that layer
 * ({@code verbs.WorkCompletionException}, {@code cm.CmException},
 * {@code failover.FailoverException}); all of them extend
 * {@code RdmaException}; misuse throws {@code IllegalStateException}s (closed, in use, busy) and {@code UnsupportedOperationException} (a capability the transport lacks).
 */
package org.rdmapanama.error;
