// Each input line a JSON number; prints the double RapidJSON's default Parse gives, as %a.
#include <rapidjson/document.h>
#include <cstdio>
#include <iostream>
#include <string>
int main()
{
  std::string line;
  while (std::getline(std::cin, line)) {
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    if (doc.HasParseError() || !doc.IsNumber()) { std::printf("error\n"); continue; }
    std::printf("%a\n", doc.GetDouble());
  }
}
