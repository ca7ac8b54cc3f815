import { handOverOverHttp } from './handover';

handOverOverHttp('current', 'hpos');
