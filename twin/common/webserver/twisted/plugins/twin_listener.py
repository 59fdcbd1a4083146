"""The `listener:` endpoint of serve's web processes: a listening socket inherited from serve, of
either family. daphne's own `fd:` endpoint adopts every socket as IPv4 (its `domain` arrives as
a string the reactor does not know). Twisted finds this parser because serve puts the directory
above `twisted/plugins` on the web processes' PYTHONPATH (twisted.plugin.pluginPackagePaths)."""
import socket

from twisted.internet.endpoints import AdoptedStreamServerEndpoint
from twisted.internet.interfaces import IStreamServerEndpointStringParser
from twisted.plugin import IPlugin
from zope.interface import implementer

FAMILIES = {"INET": socket.AF_INET, "INET6": socket.AF_INET6}


@implementer(IPlugin, IStreamServerEndpointStringParser)
class ListenerParser:
    prefix = "listener"

    def parseStreamServer(self, reactor, *args, **kwargs):
        return self._parse(reactor, *args, **kwargs)

    def _parse(self, reactor, fileno: str, family: str = "INET") -> AdoptedStreamServerEndpoint:
        return AdoptedStreamServerEndpoint(reactor, int(fileno), FAMILIES[family])


parser = ListenerParser()
