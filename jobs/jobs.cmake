# SLURM job arrays and cluster profiles (jobs/README.md): used by the CLI.
add_library(fftune_jobs STATIC
  jobs/cluster_profile.cpp
  jobs/slurm_arrays.cpp)
target_link_libraries(fftune_jobs PUBLIC fftune PRIVATE fmt::fmt)
target_compile_options(fftune_jobs PRIVATE -Wall -Wextra)
target_link_libraries(fftune_cli PRIVATE fftune_jobs)
