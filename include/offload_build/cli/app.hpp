// The command-line front end. main.cpp forwards here; this is the only place
// with a catch-all, turning any escaped exception into a clean error and exit code.
#pragma once

namespace ob::cli {

int main(int argc, char** argv);

}  // namespace ob::cli
