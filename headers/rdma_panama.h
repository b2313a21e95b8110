/*
 * jextract input for rdma-panama: the verbs and rdma_cm APIs (rdma-core 44,
 * Debian's libibverbs-dev and librdmacm-dev) plus the socket address types
 * that rdma_cm takes. What is kept from it is listed in rdma_panama.includes.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
