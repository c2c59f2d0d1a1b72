#include "core/run/testcase_parser.hpp"
std::string fftune::TestcaseParser::list(const std::vector<std::string>& v) { std::string s; for (auto& x : v) s += x + " "; return s; }
