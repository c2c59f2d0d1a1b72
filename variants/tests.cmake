# Tests beside the variant sources.
fftune_add_test(decomposition_test SOURCES variants/decompositions/decomposition_test.cpp LABELS unit)
fftune_add_test(backend_test SOURCES variants/backends/backend_test.cpp LABELS unit)
set_tests_properties(backend_test PROPERTIES ENVIRONMENT FFTUNE_TEST_BACKEND=fftw)
if(CMAKE_CUDA_COMPILER)
  fftune_add_test(backend_gpu_test REUSE backend_test LABELS gpu ENVIRONMENT FFTUNE_TEST_BACKEND=cuda)
  # cufftXt over every GPU of one process; skipped (with the reason) below 2 GPUs.
  fftune_add_test(reference_cufftxt_gpu_test SOURCES variants/decompositions/reference_cufftxt_test.cpp
    LABELS gpu MPI_RANKS 1)
  target_link_libraries(reference_cufftxt_gpu_test PRIVATE CUDA::cudart)
  # A sticky CUDA error is a lost device (Backend::device_fault); an ordinary failed call is not.
  fftune_add_test(cuda_device_fault_gpu_test SOURCES variants/backends/cuda_device_fault_test.cpp
    variants/backends/cuda_illegal_write.cu LABELS gpu)
  target_link_libraries(cuda_device_fault_gpu_test PRIVATE CUDA::cudart)
  # The same on another GPU of a cufftXt transform (skipped below 2 GPUs).
  fftune_add_test(cuda_multi_device_fault_gpu_test SOURCES variants/backends/cuda_multi_device_fault_test.cpp
    variants/backends/cuda_illegal_write.cu LABELS gpu)
  target_link_libraries(cuda_multi_device_fault_gpu_test PRIVATE CUDA::cudart)
  # Freed arrays (device, pinned host) kept for the next allocation of their size; once more with the pools off.
  fftune_add_test(cuda_block_pool_gpu_test SOURCES variants/backends/cuda_block_pool_test.cpp LABELS gpu)
  target_link_libraries(cuda_block_pool_gpu_test PRIVATE CUDA::cudart)
  fftune_add_test(cuda_block_pool_off_gpu_test REUSE cuda_block_pool_gpu_test LABELS gpu
    ENVIRONMENT "FFTUNE_DEVICE_POOL_MIB=0;FFTUNE_HOST_POOL_MIB=0")
  set_tests_properties(cuda_block_pool_gpu_test cuda_block_pool_off_gpu_test PROPERTIES RUN_SERIAL TRUE)
  if(FFTUNE_NCCL_LIBRARY AND FFTUNE_NCCL_INCLUDE_DIR)
    # One NCCL communicator per group of ranks, reused across plans; skipped
    # (with the reason) where ranks share a GPU.
    fftune_add_test(nccl_common_gpu_mpi_test SOURCES variants/transports/nccl_common_mpi_test.cpp
      LABELS gpu MPI_RANKS 1 2 4)
    target_include_directories(nccl_common_gpu_mpi_test PRIVATE ${FFTUNE_NCCL_INCLUDE_DIR})
    target_link_libraries(nccl_common_gpu_mpi_test PRIVATE CUDA::cudart ${FFTUNE_NCCL_LIBRARY})
  endif()
endif()
fftune_add_test(transport_mpi_test SOURCES variants/transports/transport_mpi_test.cpp LABELS engine MPI_RANKS 1 2 3 4)
