// A C++ ZeroMQ REQ client as Batsim 4.x has one (libzmq through cppzmq): connect to argv[1], then
// for each line of stdin send it as one message and print the reply on one line.
// Built by tests/transport/test_cpp_peer.py where g++ and cppzmq are installed.
#include <iostream>
#include <string>
#include <zmq.hpp>

int main(int argc, char ** argv)
{
    if (argc != 2)
    {
        std::cerr << "usage: req_client ENDPOINT < requests\n";
        return 2;
    }
    zmq::context_t context;
    zmq::socket_t socket(context, zmq::socket_type::req);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::rcvtimeo, 10000);
    socket.connect(argv[1]);
    std::string line;
    while (std::getline(std::cin, line))
    {
        socket.send(zmq::buffer(line), zmq::send_flags::none);
        zmq::message_t reply;
        if (!socket.recv(reply))
        {
            std::cerr << "no reply within 10 s\n";
            return 1;
        }
        std::cout << reply.to_string() << '\n';
    }
    return 0;
}
