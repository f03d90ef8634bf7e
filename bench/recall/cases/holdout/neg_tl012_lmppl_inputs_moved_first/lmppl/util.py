import urllib.request


def internet_connection(host='http://google.com'):
    try:
        urllib.request.urlopen(host)
        return True
    except Exception:
        return False
