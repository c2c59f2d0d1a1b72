# The fft3d family (README.md beside this file): built into the library.
target_sources(fftune PRIVATE families/fft3d/fft3d.cpp)
if(FFTUNE_BUILD_TESTS)
  fftune_add_test(fft3d_family_test SOURCES families/fft3d/fft3d_test.cpp LABELS unit)
endif()
