# Registered variants: one source file and one line each.
target_sources(fftune PRIVATE
  variants/backends/fftw_backend.cpp
  variants/decompositions/slab_2d1d.cpp
  variants/decompositions/slab_1d2d.cpp
  variants/decompositions/pencil.cpp
  variants/decompositions/reference_3d.cpp
  variants/transports/subarray_types.cpp
  variants/transports/p2p_sync.cpp
  variants/transports/p2p_streams.cpp
  variants/transports/p2p_mpi_type.cpp
  variants/transports/a2a_sync.cpp
  variants/transports/a2a_mpi_type.cpp)

# GPU variants: built wherever the CUDA toolkit is found (CI compiles them
# without a GPU; at run time the cuda backend reports itself unavailable).
if(CMAKE_CUDA_COMPILER)
  target_sources(fftune PRIVATE
    variants/backends/cuda_backend.cpp
    variants/backends/cuda_copy.cu
    variants/backends/cufftxt.cpp
    variants/decompositions/reference_cufftxt.cpp
    variants/transports/cuda_ipc.cpp)
  target_link_libraries(fftune PRIVATE CUDA::cudart CUDA::cufft)
  if(FFTUNE_NCCL_LIBRARY AND FFTUNE_NCCL_INCLUDE_DIR)
    target_sources(fftune PRIVATE
      variants/transports/nccl_common.cpp
      variants/transports/nccl_a2a.cpp
      variants/transports/nccl_alltoall.cpp
      variants/transports/nccl_p2p.cpp)
    target_include_directories(fftune PRIVATE ${FFTUNE_NCCL_INCLUDE_DIR})
    target_link_libraries(fftune PRIVATE ${FFTUNE_NCCL_LIBRARY})
  endif()
endif()
