# expect: Z015
import os
