# Registered variants: one source file and one line each.
target_sources(fftune PRIVATE
  variants/backends/fftw_backend.cpp
  variants/decompositions/slab_2d1d.cpp
  variants/decompositions/slab_1d2d.cpp
  variants/decompositions/pencil.cpp
  variants/transports/subarray_types.cpp
  variants/transports/p2p_sync.cpp
  variants/transports/p2p_streams.cpp
  variants/transports/p2p_mpi_type.cpp
  variants/transports/a2a_sync.cpp
  variants/transports/a2a_mpi_type.cpp)
