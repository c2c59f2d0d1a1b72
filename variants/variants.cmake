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
  # cuFFT LTO store callbacks (FftDescriptor::StoreAside), as LTO-IR for each
  # numbered CUDA architecture, embedded in the library. CUDA 13's
  # cufftXtSetJITCallback takes the callback's symbol name.
  set(fftune_lto_gencode)
  foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
    string(REGEX MATCH "^[0-9]+" num "${arch}")
    if(num)
      list(APPEND fftune_lto_gencode -gencode arch=compute_${num},code=lto_${num})
    endif()
  endforeach()
  if(CUDAToolkit_VERSION VERSION_GREATER_EQUAL 13.0 AND fftune_lto_gencode)
    set(fatbin ${CMAKE_CURRENT_BINARY_DIR}/cufft_store_aside.fatbin)
    set(embedded ${CMAKE_CURRENT_BINARY_DIR}/cufft_store_aside_fatbin.cpp)
    add_custom_command(OUTPUT ${fatbin}
      COMMAND ${CMAKE_CUDA_COMPILER} -std=c++17 -I${PROJECT_SOURCE_DIR} ${fftune_lto_gencode} -dc -fatbin
              ${PROJECT_SOURCE_DIR}/variants/backends/cufft_store_aside.cu -o ${fatbin}
      DEPENDS ${PROJECT_SOURCE_DIR}/variants/backends/cufft_store_aside.cu
              ${PROJECT_SOURCE_DIR}/variants/backends/cufft_store_aside.hpp
      COMMENT "cuFFT store callbacks as LTO-IR" VERBATIM)
    add_custom_command(OUTPUT ${embedded}
      COMMAND ${CMAKE_COMMAND} -DINPUT=${fatbin} -DOUTPUT=${embedded} -DNAME=fftune_cufft_store_aside_fatbin
              -P ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake
      DEPENDS ${fatbin} ${PROJECT_SOURCE_DIR}/cmake/embed_file.cmake VERBATIM)
    target_sources(fftune PRIVATE ${embedded})
    set_source_files_properties(variants/backends/cuda_backend.cpp PROPERTIES COMPILE_DEFINITIONS FFTUNE_CUFFT_STORE_ASIDE=1)
  endif()
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
